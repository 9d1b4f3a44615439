// How the text typed into form fields becomes values.

/** splitList reads a comma-separated field into its non-empty items. */
export function splitList(s: string): string[] {
  return s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '')
}

/** optional is a field's trimmed text, or undefined when it is blank (the input leaves it out). */
export function optional(s: string): string | undefined {
  return s.trim() === '' ? undefined : s.trim()
}
