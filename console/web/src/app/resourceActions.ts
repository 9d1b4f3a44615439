// What the resource actions menu works out without React: the RBAC
// action a run needs, checks of parameter values before they are sent,
// and how a run's result reads.

/** ActionParam is a parameter as LiveResource.actions lists it. */
export interface ActionParam {
  name: string
  type: string
  default: string
}

/** actionRight is the RBAC action that runs name on a kind of group: "action/<group>/<kind>/<name>". */
export function actionRight(group: string, kind: string, name: string): string {
  return `action/${group}/${kind}/${name}`
}

/** paramProblem says why value does not read as the parameter's type, or null when it does. */
export function paramProblem(p: ActionParam, value: string): string | null {
  const v = value.trim()
  switch (p.type) {
    case 'integer':
      return /^[+-]?\d+$/.test(v) ? null : `${p.name} must be a whole number`
    case 'number':
      return v !== '' && Number.isFinite(Number(v)) ? null : `${p.name} must be a number`
    case 'boolean':
      return v === 'true' || v === 'false' ? null : `${p.name} must be true or false`
  }
  return null
}

/** paramInputs are the values to send: every parameter, its default when left as it was. */
export function paramInputs(params: ActionParam[], values: Record<string, string>): { name: string; value: string }[] {
  return params.map((p) => ({ name: p.name, value: (values[p.name] ?? p.default).trim() }))
}

/** Change is one object a run wrote. */
export interface Change {
  operation: string
  kind: string
  namespace: string
  name: string
}

/** changesText tells what a run wrote: "patched Deployment web, created Job report-x". */
export function changesText(changes: Change[]): string {
  if (changes.length === 0) return 'nothing was written'
  return changes.map((c) => `${c.operation === 'CREATE' ? 'created' : 'patched'} ${c.kind} ${c.name}`).join(', ')
}
