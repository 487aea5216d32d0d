/**
 * The one rule for showing an id short (worker logs, the CLI's tables, the dashboard's id columns): its last
 * 8 hex digits. Job ids are UUIDv7, whose first 8 digits are the top of a millisecond timestamp (the same
 * for every job of the same minute or so) while the tail is random; worker ids are UUIDv4, random
 * throughout. So the tail tells apart the ids a screen shows together, where a prefix would print
 * `01a23312` on every line. The full id stays in links, JSON output and `--json`.
 */
export const SHORT_ID_LENGTH = 8;

/** The short form of an id: the last 8 hex digits of a UUID (any other string: its last 8 characters). */
export function shortId(id: string): string {
  const hex = id.replaceAll("-", "");
  return (hex.length >= SHORT_ID_LENGTH ? hex : id).slice(-SHORT_ID_LENGTH);
}
