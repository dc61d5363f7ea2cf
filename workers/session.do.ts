/**
 * SessionDO: one Durable Object per vision session, holding the repeat-cap counters of the images
 * embedded in it. Reservations are atomic (one object per session, storage awaits hold other
 * requests at the input gate) and everything is deleted after a day of inactivity.
 */
import { DurableObject } from "cloudflare:workers";
import { type CounterStore, releaseSlot, reserveSlot, SESSION_IDLE_MS } from "../shared/vision/repeat-cap";
import type { Reservation } from "../shared/ports";

/** A session's counters need no binding. */
export class SessionDO extends DurableObject<Record<string, never>> {
  private readonly counters: CounterStore = {
    get: (key) => this.ctx.storage.get<number>(`embed:${key}`),
    put: (key, value) => this.ctx.storage.put(`embed:${key}`, value),
  };

  async reserve(imageKey: string, cap: number | null): Promise<Reservation> {
    const reservation = await reserveSlot(this.counters, imageKey, cap);
    await this.touch();
    return reservation;
  }

  async release(imageKey: string): Promise<void> {
    await releaseSlot(this.counters, imageKey);
    await this.touch();
  }

  /** Pushes the idle deadline a day ahead. */
  private async touch(): Promise<void> {
    await this.ctx.storage.setAlarm(Date.now() + SESSION_IDLE_MS);
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
