// Drives headless Chromium for BrowserWatchTest. Commands on stdin, one a line:
//   open NAME URL   opens URL in a new tab; the tab's console lines are printed as "NAME <text>"
//   quit            closes the browser and exits
// Prints "BROWSER READY" once Chromium runs. The browser is the system's (/usr/bin/chromium,
// or $CHROMIUM), with a fresh profile: playwright-core downloads nothing.
const { chromium } = require('playwright-core');
const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

function print(line) {
  process.stdout.write(line.replace(/\n/g, ' ') + '\n');
}

(async () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'watchfanout-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ARGS,
  });
  let quitting = false;
  const quit = async (code) => {
    if (quitting) return;
    quitting = true;
    await context.close().catch(() => {});
    fs.rmSync(profile, { recursive: true, force: true });
    process.exit(code);
  };
  print('BROWSER READY');
  const input = readline.createInterface({ input: process.stdin });
  input.on('line', async (line) => {
    const [command, name, url] = line.trim().split(/\s+/);
    if (command === 'open') {
      const page = await context.newPage();
      page.on('console', (m) => print(name + ' ' + m.text()));
      page.on('pageerror', (e) => print(name + ' {"type":"PAGEERROR","message":' + JSON.stringify(String(e)) + '}'));
      await page.goto(url).catch((e) => print(name + ' {"type":"GOTOERROR","message":' + JSON.stringify(String(e)) + '}'));
    } else if (command === 'quit') {
      await quit(0);
    }
  });
  input.on('close', () => quit(0));
})().catch((e) => {
  print('BROWSER FAILED ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
