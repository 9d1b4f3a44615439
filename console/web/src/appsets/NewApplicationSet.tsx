import { useMemo } from 'react'
import { SETS_PATH, navigate, setPath } from '../router'
import { SetEditor } from './SetEditor'
import { newSetManifest } from './view'

/** NEW_SET_PATH is where a new ApplicationSet is written. */
export const NEW_SET_PATH = '/new-applicationset'

/** NewApplicationSetPage creates an ApplicationSet and opens its page. */
export function NewApplicationSetPage() {
  const initial = useMemo(newSetManifest, [])
  return (
    <section className="sets" aria-labelledby="new-set-title">
      <h1 id="new-set-title">New ApplicationSet</h1>
      <SetEditor
        mode="create"
        initial={initial}
        onDone={(created) => navigate(created ? setPath(created.name, created.namespace) : SETS_PATH)}
        onCancel={() => (window.history.length > 1 ? window.history.back() : navigate(SETS_PATH))}
      />
    </section>
  )
}
