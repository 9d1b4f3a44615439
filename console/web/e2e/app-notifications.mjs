// End-to-end check of the application page's Notifications view: the app
// "shop" whose state annotation records 25 deliveries, the newest a dead
// letter whose error holds HTML, then a failed one, one pending and 22
// sent, a minute apart; subscribed to on-health-degraded on slack, its
// project to on-sync-succeeded, and the ConfigMap subscribing every app to
// on-sync-failed; and "frozen", which the user may not update (see
// TestAppNotifications).
//
//   node e2e/app-notifications.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
//
// SIGNALS (environment) is a directory: the script writes "watching" there
// once every delivery is shown, and the test then records one more and
// changes the failed one.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('app-notifications.mjs')
const signals = process.env.SIGNALS
if (!signals) {
  console.error('SIGNALS must name the directory shared with the Go test')
  process.exit(2)
}

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


  // Live: the test records a delivery and changes the failed one.
  await page.evaluate(() => {
    window.graphcdNoReload = true
  })
  writeFileSync(join(signals, 'watching'), '')
  await page.getByText('26 of 26 deliveries, newest first.').waitFor()
  await page.waitForFunction(() => document.querySelector('.deliveries .delivery')?.getAttribute('data-recipient') === 'live')
  check(true, 'a delivery recorded meanwhile appears at the top, counted, without a reload')
  const changed = rows.nth(1)
  await page.waitForFunction(() => document.querySelectorAll('.deliveries .delivery')[1]?.getAttribute('data-outcome') === 'SENT')
  check((await changed.getAttribute('data-recipient')) === 'oncall' && (await changed.textContent()).includes('3 attempts'), 'the failed delivery turns Sent after its third attempt and moves up')
  check((await page.locator('.deliveries [data-recipient="oncall"]').count()) === 1, 'and shows once')
  check(await page.evaluate(() => window.graphcdNoReload === true), 'the page was not reloaded')
  await shot('live')

  // Subscriptions: the app's own, its project's and the ConfigMap's.
  const subs = page.getByRole('table', { name: 'Notification subscriptions' })
  const sub = (trigger, source) => subs.locator(`tr[data-trigger="${trigger}"][data-source="${source}"]`)
  await sub('on-health-degraded', 'APPLICATION').waitFor()
  check(await sub('on-health-degraded', 'APPLICATION').getByRole('button', { name: 'Unsubscribe from on-health-degraded on slack' }).isEnabled(), "the app's own subscription can be removed")
  const fromProject = sub('on-sync-succeeded', 'PROJECT')
  check(
    (await fromProject.textContent()).includes("project default's annotation notifications.argoproj.io/subscribe.on-sync-succeeded.slack: change it on the project") &&
      (await fromProject.getByRole('button').count()) === 0,
    "the project's subscription is read-only and says where it is declared",
  )
  const fromConfig = sub('on-sync-failed', 'DEFAULT')
  check((await fromConfig.textContent()).includes('notifications ConfigMap') && (await fromConfig.getByRole('button').count()) === 0, "the ConfigMap's subscription is read-only too")
  check((await fromConfig.textContent()).includes('platform'), 'rows show their recipients')

  const form = page.getByRole('form', { name: 'Subscribe to a notification' })
  await form.getByRole('combobox', { name: /^Trigger/ }).selectOption('on-deployed')
  await form.getByLabel('Service').fill('slack')
  await form.getByLabel('Recipients').fill('deploys; ops')
  await form.getByRole('button', { name: 'Subscribe' }).click()
  await form.getByText('Subscribed to on-deployed on slack: deploys, ops.').waitFor()
  await sub('on-deployed', 'APPLICATION').waitFor()
  check((await sub('on-deployed', 'APPLICATION').textContent()).includes('deploys, ops'), 'Subscribe adds the subscription, listed with its recipients')
  await shot('subscribed')

  await sub('on-health-degraded', 'APPLICATION').getByRole('button', { name: 'Unsubscribe from on-health-degraded on slack' }).click()
  await sub('on-health-degraded', 'APPLICATION').waitFor({ state: 'detached' })
  check(true, 'Unsubscribe removes it (the test reads both from the Application)')

  // The view comes back from the URL.
  await page.reload()
  await page.waitForFunction(() => document.querySelectorAll('.deliveries .delivery').length === 20)
  check(true, 'the view comes back from the URL after a reload')

  // An app the user may not update.
  await page.goto(`${base}/applications/frozen?view=notifications`)
  await page.getByText('You may not change the subscriptions of this application: that needs applications, update on it.').waitFor()
  const frozen = sub('on-health-degraded', 'APPLICATION').getByRole('button', { name: /^Unsubscribe/ })
  check(await frozen.isDisabled(), 'its Unsubscribe button is disabled')
  check((await frozen.getAttribute('title'))?.includes('applications, update'), 'and says why')
  check(await page.getByRole('button', { name: 'Subscribe', exact: true }).isDisabled(), 'and so is the subscribe form')
  await page.getByText('Nothing was notified for this application yet.').waitFor()
  check(true, 'an app without deliveries says so')
  await shot('read-only')
})
