// How times from the API (RFC 3339 strings) read: in the browser's locale and zone.

/** dateTime is a moment as date and time. */
export function dateTime(t: string): string {
  return new Date(t).toLocaleString()
}

/** clockTime is a moment (now when left out) as the time of day. */
export function clockTime(t?: string): string {
  return (t === undefined ? new Date() : new Date(t)).toLocaleTimeString()
}
