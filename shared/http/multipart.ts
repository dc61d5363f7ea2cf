/**
 * multipart/form-data bodies (vision uploads): size limit first, then the web-standard parser.
 * The text fields named as JSON (`region`, `model`) are parsed, every other one stays text (a
 * question that reads `[1, 2]` is a question); the file field comes back as bytes.
 */
import { AppError } from "./errors";
import { parseJsonText, readBodyBytes } from "./body";

export function isMultipart(contentType: string | null): boolean {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase() === "multipart/form-data";
}

export async function readMultipart(
  request: Request,
  limit: number,
  upload: { field: string; maxBytes: number; jsonFields: readonly string[] },
): Promise<{ fields: Record<string, unknown>; file: Uint8Array }> {
  const { field: fileField, maxBytes: maxFileBytes, jsonFields } = upload;
  const bytes = await readBodyBytes(request, limit);
  let form: FormData;
  try {
    form = await new Response(bytes as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": request.headers.get("content-type") ?? "" },
    }).formData();
  } catch {
    throw new AppError(
      400,
      "invalid_request",
      "The multipart body could not be parsed; send multipart/form-data with a boundary.",
    );
  }
  const fields: Record<string, unknown> = {};
  let file: Uint8Array | null = null;
  for (const [name, value] of form.entries()) {
    if (name === fileField && typeof value !== "string") {
      if (value.size > maxFileBytes)
        throw new AppError(
          413,
          "image_too_large",
          `The uploaded ${fileField} is larger than ${Math.round(maxFileBytes / 1024 / 1024)} MiB; send a smaller file.`,
        );
      file = new Uint8Array(await value.arrayBuffer());
    } else if (typeof value === "string") {
      fields[name] = jsonFields.includes(name) ? parseField(value) : value;
    }
  }
  if (!file)
    throw new AppError(400, "invalid_request", `The multipart body has no file field "${fileField}".`, {
      details: [{ path: [fileField], message: "missing file" }],
    });
  return { fields, file };
}

/**
 * A JSON field's text (`[1,2,3,4]`, `{"provider":...}`) becomes its value, under the same nesting
 * and Unicode rules as a JSON body; text that is not JSON stays text (and fails the schema).
 */
function parseField(value: string): unknown {
  const trimmed = value.trim();
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    try {
      return parseJsonText(trimmed);
    } catch (error) {
      if (error instanceof AppError && error.code === "invalid_json") return value;
      throw error;
    }
  }
  return value;
}
