// End-to-end check of the application page's Notifications view: the app
// "shop" whose state annotation records 25 deliveries, the newest a dead
// letter whose error holds HTML, then a failed one, one pending and 22
// sent, a minute apart (see TestAppNotifications).
//
//   node e2e/app-notifications.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('app-notifications.mjs')

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)
  await page.goto(`${base}/applications/shop`)
  await page.getByRole('button', { name: 'Notifications', exact: true }).click()
  await page.waitForURL(/view=notifications/)

  const list = page.getByRole('list', { name: 'Notification deliveries' })
  const rows = list.locator('.delivery')
  await page.waitForFunction(() => document.querySelectorAll('.deliveries .delivery').length === 20)
  check(true, 'the first page shows 20 deliveries')
  await page.getByText('20 of 25 deliveries, newest first.').waitFor()
  check(true, 'and says how many the application records')

  const outcomes = await rows.evaluateAll((els) => els.slice(0, 4).map((e) => `${e.getAttribute('data-trigger')}:${e.getAttribute('data-outcome')}`))
  check(
    outcomes.join(' ') === 'on-sync-failed:DEAD on-health-degraded:FAILED on-sync-running:PENDING on-deployed:SENT',
    `newest first: ${outcomes.join(' ')}`,
  )
  const labels = await rows.evaluateAll((els) => els.slice(0, 4).map((e) => e.querySelector('.badge')?.getAttribute('data-status')))
  check(labels.join(',') === 'Dead letter,Failed,Pending,Sent', `each outcome has its badge: ${labels.join(', ')}`)

  const dead = rows.first()
  const error = await dead.locator('.delivery-error').textContent()
  check(error === `webhook deploy-log: 500 <img src=x onerror="document.title='pwned'"> token ***`, `the error shows as text: ${error}`)
  check((await list.locator('img').count()) === 0 && (await page.title()) !== 'pwned', 'the HTML in the error is not rendered')
  check((await dead.textContent()).includes('5 attempts · gave up after 5 attempts'), 'the dead letter says it gave up after 5 attempts')
  check((await rows.nth(1).textContent()).includes('attempt 2 failed; another is due'), 'the failed delivery says another attempt is due')
  check((await rows.nth(1).textContent()).includes('to slack · oncall'), 'a row names its service and recipient')

  const times = await rows.evaluateAll((els) => els.slice(0, 3).map((e) => e.querySelector('time')?.textContent))
  check(/^(just now|1 min ago)$/.test(times[0] ?? '') && /min ago$/.test(times[2] ?? ''), `times read relative to now: ${times.join(', ')}`)
  check(!!(await dead.locator('time').getAttribute('title')), 'and give the full date and time on hover')
  await shot('deliveries')

  await page.getByRole('button', { name: 'Older deliveries' }).click()
  await page.waitForFunction(() => document.querySelectorAll('.deliveries .delivery').length === 25)
  await page.getByText('25 of 25 deliveries, newest first.').waitFor()
  check((await page.getByRole('button', { name: 'Older deliveries' }).count()) === 0, '"Older deliveries" adds the last 5, and then there are no more')
  const recipients = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-recipient')))
  check(new Set(recipients).size === 25 && recipients[24] === 'team-24', 'no delivery shows twice and the oldest comes last')
  await shot('older')

  await page.reload()
  await page.waitForFunction(() => document.querySelectorAll('.deliveries .delivery').length === 20)
  check(true, 'the view comes back from the URL after a reload')
})
