// Props of the editor components. They live apart from the CodeMirror code
// so that importing a type never pulls CodeMirror into the main bundle.

/** YamlViewProps shows YAML read-only (selectable, focusable, line numbers). */
export interface YamlViewProps {
  /** The YAML text to show; a new value replaces the shown text. */
  value: string
  /** Accessible name of the text area, e.g. "Live manifest of Deployment web". */
  label: string
  /** CSS height of the view; it scrolls inside. Defaults to auto (grows with the text). */
  height?: string
}

/** YamlEditorProps edit YAML text, e.g. an application's spec in a create or edit form. */
export interface YamlEditorProps {
  /**
   * The text. The editor keeps its own document while the user types; a value
   * that differs from it (e.g. a form reset) replaces the document.
   */
  value: string
  /** Called with the whole text after every change the user makes. */
  onChange: (value: string) => void
  /** Accessible name of the text area, e.g. "Application manifest". */
  label: string
  /** CSS height of the editor; it scrolls inside. Defaults to 20rem. */
  height?: string
  /** Called on Mod-s (Ctrl-s / Cmd-s) so a form can submit from the keyboard. */
  onSave?: () => void
}

/** DiffMode: side by side (two columns) or inline (one column, deletions struck through). */
export type DiffMode = 'split' | 'inline'

/** DiffViewProps compare the live state of a resource (before) with the desired one (after). */
export interface DiffViewProps {
  live: string
  desired: string
  /** Mode shown first; the view has its own toggle. Defaults to split, or inline on narrow screens. */
  initialMode?: DiffMode
  /** CSS height of the view; it scrolls inside. Defaults to auto. */
  height?: string
}
