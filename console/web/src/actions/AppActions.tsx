/** AppActions is the application page's action bar (sync, refresh, history, delete...). */
export function AppActions(_props: { name: string }) {
  return null
}
