import { useMemo } from 'react'
import { navigate } from '../router'
import { AppEditor } from './AppEditor'
import { newManifest } from './appform'

/** NEW_APP_PATH is where the create form lives. */
export const NEW_APP_PATH = '/new-application'

/** NewApplicationPage creates an application and opens its page. */
export function NewApplicationPage() {
  const initial = useMemo(newManifest, [])
  return (
    <section className="new-app" aria-labelledby="new-app-title">
      <h1 id="new-app-title">New application</h1>
      <AppEditor
        mode="create"
        initial={initial}
        onDone={(path) => navigate(path ?? '/applications')}
        onCancel={() => (window.history.length > 1 ? window.history.back() : navigate('/applications'))}
      />
    </section>
  )
}

