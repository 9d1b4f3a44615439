import { AppActions } from '../actions/AppActions'

/** ApplicationPage shows one application: header, resource tree, resource panel. */
export function ApplicationPage({ name }: { name: string }) {
  return (
    <section className="app-page" aria-labelledby="app-title">
      <h1 id="app-title">{name}</h1>
      <AppActions name={name} />
    </section>
  )
}
