// Durations written as text, read as seconds.
export function parseDuration(text) {
  const match = /^(\d+)s$/.exec(text);
  if (!match) {
    throw new RangeError(`not a duration: ${text}`);
  }
  return Number(match[1]);
}
