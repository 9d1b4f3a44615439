import { useMutation, useQuery } from 'urql'
import type { TokenFragment } from '../gql/graphql'
import { ErrorLine } from '../ui/Alert'
import { errorText } from '../ui/errors'
import { dateTime } from '../ui/format'
import { AccountsQuery, CreateAccountTokenMutation, DeleteAccountTokenMutation } from './documents'
import { TokenList } from './Tokens'

/** AccountsPage lists the local accounts the caller may see, with their API tokens. */
export function AccountsPage() {
  const [list, refetch] = useQuery({ query: AccountsQuery })
  const reload = () => refetch({ requestPolicy: 'network-only' })
  return (
    <section className="settings-page" aria-labelledby="accounts-title">
      <h1 id="accounts-title">Accounts</h1>
      <ErrorLine error={list.error ? errorText('Loading failed', list.error) : null} />
      <ul className="cards" aria-label="Accounts">
        {(list.data?.accounts ?? []).map((a) => (
          <li key={a.name} className="card-col" data-account={a.name}>
            <div className="card-main">
              <strong>{a.name}</strong>
              <span className="k">
                {a.enabled ? 'enabled' : 'disabled'} · {a.capabilities.join(', ') || 'no capability'}
                {a.passwordChangedAt ? ` · password changed ${dateTime(a.passwordChangedAt)}` : ''}
              </span>
            </div>
            {a.capabilities.includes('apiKey') ? <AccountTokens account={a.name} tokens={a.tokens} onChanged={reload} /> : null}
          </li>
        ))}
      </ul>
    </section>
  )
}

function AccountTokens(props: { account: string; tokens: readonly TokenFragment[]; onChanged: () => void }) {
  const [, create] = useMutation(CreateAccountTokenMutation)
  const [, del] = useMutation(DeleteAccountTokenMutation)
  return (
    <TokenList
      tokens={props.tokens}
      editable
      empty="No API token."
      removeLabel="Delete"
      formLabel={`New token for ${props.account}`}
      expiresPlaceholder="expires in, e.g. 720h"
      issue={async (id, expiresIn) => {
        const r = await create({ input: { account: props.account, id, expiresIn } })
        return r.error ? errorText(`Creating a token for ${props.account} failed`, r.error) : (r.data?.createAccountToken ?? 'Creating the token failed.')
      }}
      remove={async (id) => {
        const r = await del({ account: props.account, id })
        return r.error ? errorText(`Deleting token ${id} failed`, r.error) : null
      }}
      onChanged={props.onChanged}
    />
  )
}
