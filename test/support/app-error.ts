/** Awaits a promise that must reject with an AppError, and returns that error for assertions. */
import { expect } from "vitest";
import { AppError } from "../../shared/http/errors";

export async function appErrorOf(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error("expected an AppError, but the promise resolved");
}
