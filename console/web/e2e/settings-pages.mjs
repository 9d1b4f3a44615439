// End-to-end check of the settings pages: add a repository through the
// form (the served git repository in GRAPHCD_E2E_REPO) and see it listed
// with a successful connection test; create project "shop", add role
// "ci" with a policy, create a token (shown once) and add a sync window;
// add and remove a cluster; create and delete an API token of account
// "ci"; user info lists the caller's permissions; the audit trail lists
// those changes and filters them; the dark theme applies and survives a
// reload.
//
//   GRAPHCD_E2E_REPO=URL node e2e/settings-pages.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('settings-pages.mjs')
const repo = process.env.GRAPHCD_E2E_REPO
if (!repo) {
  console.error('GRAPHCD_E2E_REPO (a git repository URL) is required')
  process.exit(2)
}
const slow = { timeout: 60_000 } // the connection test clones

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)

  await page.getByRole('link', { name: 'Settings', exact: true }).first().click()
  await page.getByRole('heading', { name: 'Settings', exact: true }).waitFor()
  await page.getByRole('main').getByRole('link', { name: 'Repositories', exact: true }).first().click()
  await page.getByRole('button', { name: 'Add repository' }).click()
  const form = page.getByRole('form', { name: 'New repository' })
  await form.getByLabel('Repository URL').fill(repo)
  await form.getByRole('button', { name: 'Test connection and save' }).click()
  const listed = page.locator(`li[data-url="${repo}"]`)
  await listed.locator('[data-connection="ok"]').waitFor(slow)
  check(true, `the repository is listed with a successful connection: ${(await listed.locator('.conn').textContent())?.trim()}`)
  check((await listed.getByRole('link', { name: repo }).count()) === 1, 'its http URL is a link')
  await shot('repository')

  // After a reload the page knows only what the server says: its own test
  // of the stored credentials, shown without a click, and again on
  // "Test connection".
  await page.reload()
  await listed.locator('[data-connection="ok"]').waitFor(slow)
  check(true, `after a reload the server's connection state shows: ${(await listed.locator('.conn').textContent())?.trim()}`)
  await listed.getByRole('button', { name: 'Test connection', exact: true }).click()
  await listed.locator('[data-connection="ok"]').waitFor(slow)
  check(true, 'Test connection asks the server to test the stored credentials again')

  await page.goto(`${base}/settings/projects`)
  await page.getByRole('button', { name: 'New project' }).click()
  const np = page.getByRole('form', { name: 'New project' })
  await np.getByLabel('Name').fill('shop')
  await np.getByLabel('Description').fill('the shop front')
  await np.getByRole('button', { name: 'Create project' }).click()
  await page.waitForURL(/\/settings\/projects\/shop$/)
  await page.getByRole('heading', { name: 'shop', exact: true }).waitFor()
  check(true, 'project shop created; its page opened')

  await page.getByLabel('Role name').fill('ci')
  await page.getByLabel('Role description').fill('deploys from CI')
  await page.getByRole('button', { name: 'Add role' }).click()
  const role = page.locator('article[data-role="ci"]')
  await role.waitFor()
  await role.getByLabel('New policy of ci').fill('p, proj:shop:ci, applications, sync, shop/*, allow')
  await role.getByRole('button', { name: 'Add', exact: true }).first().click()
  await role.getByText('p, proj:shop:ci, applications, sync, shop/*, allow').waitFor()
  check(true, 'role ci added with a sync policy')
  await role.getByLabel('Token ID').fill('pipeline')
  await role.getByRole('button', { name: 'Create token' }).click()
  const once = role.locator('.token-once')
  await once.waitFor()
  const token = await once.getByLabel('New token pipeline').inputValue()
  check(token.split('.').length === 3, `the new token is shown once (a JWT of ${token.length} characters)`)
  await role.locator('code', { hasText: /^pipeline$/ }).waitFor()
  await shot('project-token')
  await once.getByRole('button', { name: 'Done, hide it' }).click()
  check((await role.locator('.token-once').count()) === 0 && !(await page.content()).includes(token), 'once hidden, the token is nowhere on the page')

  const windows = page.getByRole('form', { name: 'New sync window' })
  await windows.getByLabel('Kind').selectOption('deny')
  await windows.getByLabel('Schedule (cron)').fill('0 22 * * *')
  await windows.getByLabel('Duration').fill('8h')
  await windows.getByLabel('Applications').fill('shop-*')
  await windows.getByRole('button', { name: 'Add window' }).click()
  await page.getByText('deny 0 22 * * * for 8h').waitFor()
  check(true, 'a deny sync window was added')

  await page.goto(`${base}/settings/clusters`)
  await page.getByRole('button', { name: 'Add cluster' }).click()
  const nc = page.getByRole('form', { name: 'New cluster' })
  await nc.getByLabel('Name', { exact: true }).fill('fake')
  await nc.getByLabel('Server URL').fill('https://fake.example:6443')
  await nc.getByLabel('Bearer token').fill('not-a-real-token')
  await nc.getByRole('button', { name: 'Add cluster' }).click()
  const cluster = page.locator('li[data-server="https://fake.example:6443"]')
  await cluster.waitFor()
  check(!(await page.content()).includes('not-a-real-token'), 'cluster fake is listed; its token is not on the page')
  await shot('clusters')
  await cluster.getByRole('button', { name: 'Remove' }).click()
  await cluster.getByRole('button', { name: 'Yes, remove' }).click()
  await cluster.waitFor({ state: 'detached' })
  check(true, 'cluster fake removed')

  await page.goto(`${base}/settings/accounts`)
  const ci = page.locator('li[data-account="ci"]')
  await ci.waitFor()
  await ci.getByLabel('Token ID').fill('deploy')
  await ci.getByLabel('Expires in').fill('24h')
  await ci.getByRole('button', { name: 'Create token' }).click()
  const ciToken = await ci.getByLabel('New token deploy').inputValue()
  check(ciToken.split('.').length === 3, `account ci's new token is shown once (a JWT of ${ciToken.length} characters)`)
  await ci.locator('code', { hasText: /^deploy$/ }).waitFor()
  await shot('account-token')
  await ci.getByRole('button', { name: 'Done, hide it' }).click()
  await ci.getByRole('button', { name: 'Delete' }).click()
  await ci.getByRole('button', { name: 'Yes, delete' }).click()
  await ci.locator('code', { hasText: /^deploy$/ }).waitFor({ state: 'detached' })
  check(true, "account ci's token deleted")

  await page.goto(`${base}/settings/user`)
  await page.locator('[data-field="username"]').waitFor()
  check((await page.locator('[data-field="username"]').textContent()) === user, `user info names ${user}`)
  const perms = await page.getByRole('table', { name: 'Permissions' }).getByRole('row').count()
  check(perms > 1, `user info lists ${perms - 1} permission rules`)
  await shot('user-info')

  // The audit trail lists what the forms above did, newest first, and
  // filters by kind through the URL.
  await page.getByRole('link', { name: 'Audit', exact: true }).first().click()
  await page.getByRole('heading', { name: 'Audit trail' }).waitFor()
  const entries = page.getByRole('list', { name: 'Audit entries' })
  // (createProject exactly: the project token above is a createProjectToken)
  const projectCreations = entries.locator('li', { has: page.locator('code', { hasText: /^createProject$/ }) })
  await projectCreations.first().waitFor()
  check((await projectCreations.count()) === 1, 'the audit trail lists the project creation once')
  check((await entries.locator('li', { hasText: 'createRepository' }).count()) >= 1, 'and the repository added')
  await page.getByRole('form', { name: 'Filter the audit trail' }).getByLabel('Kind').fill('AppProject')
  await page.getByRole('button', { name: 'Filter', exact: true }).click()
  await page.waitForURL(/\/audit\?kind=AppProject$/)
  await entries.locator('li', { hasText: 'createRepository' }).waitFor({ state: 'detached' })
  const kinds = await entries.locator('.audit-object').allTextContents()
  check(kinds.length > 0 && kinds.every((k) => k.startsWith('AppProject ')), `filtered by kind: ${kinds.join(', ')}`)
  await shot('audit')
  await page.goto(`${base}/settings/user`)
  await page.locator('[data-field="username"]').waitFor()

  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor || getComputedStyle(document.documentElement).backgroundColor)
  await page.getByLabel('Theme').selectOption('light')
  check((await page.evaluate(() => document.documentElement.dataset.theme)) === 'light', 'the light theme applies')
  const light = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--bg').trim())
  await page.getByLabel('Theme').selectOption('dark')
  const dark = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--bg').trim())
  check((await page.evaluate(() => document.documentElement.dataset.theme)) === 'dark' && dark !== light, `the dark theme applies (background ${light} → ${dark}; body ${await bg()})`)
  await shot('user-info-dark')
  await page.reload()
  await page.locator('[data-field="username"]').waitFor()
  check((await page.evaluate(() => document.documentElement.dataset.theme)) === 'dark', 'the dark theme survives a reload')
  await page.goto(`${base}/settings/projects/shop`)
  await page.locator('article[data-role="ci"]').waitFor()
  await shot('project-dark')
  await page.setViewportSize({ width: 390, height: 844 })
  await shot('project-dark-phone')
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
  check(overflow <= 0, `at 390 px wide the page does not scroll sideways (overflow ${overflow}px)`)
  await page.getByLabel('Theme').selectOption('system')
})
