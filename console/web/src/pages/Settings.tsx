/** SettingsPage holds repositories, credentials, clusters, projects, accounts and user info. */
export function SettingsPage({ path }: { path: string }) {
  return (
    <section className="settings" aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <p className="empty">{path}</p>
    </section>
  )
}
