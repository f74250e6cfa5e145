// Drives the MCP Apps test host in headless Chromium (Debian's package) with
// playwright-core: serves host.html and its bundle on 127.0.0.1, forwards
// /mcp to the toolbox server under test, then checks what a user sees.
//
//   node drive.mjs MCP_URL ARTIFACT_DIR
//
// Prints one PASS or FAIL line per check; exits 1 on a failure.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const [mcpUrl, artifacts] = process.argv.slice(2);
if (!mcpUrl || !artifacts) {
  console.error("usage: node drive.mjs MCP_URL ARTIFACT_DIR");
  process.exit(2);
}
fs.mkdirSync(artifacts, { recursive: true });
const target = new URL(mcpUrl);

// The host page's origin also carries /mcp, so the page's client needs no
// CORS: requests (and their event streams) are piped to the server as they come.
const files = {
  "/": ["host.html", "text/html"],
  "/host.bundle.js": ["host.bundle.js", "text/javascript"],
};
const server = http.createServer((request, response) => {
  const url = new URL(request.url, "http://127.0.0.1");
  if (url.pathname === "/mcp") {
    const upstream = http.request(
      {
        hostname: target.hostname,
        port: target.port,
        path: target.pathname,
        method: request.method,
        headers: { ...request.headers, host: target.host },
      },
      (answer) => {
        response.writeHead(answer.statusCode, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on("error", (error) => {
      response.writeHead(502);
      response.end(String(error));
    });
    request.pipe(upstream);
    return;
  }
  const file = files[url.pathname];
  if (!file) {
    response.writeHead(404);
    response.end();
    return;
  }
  response.writeHead(200, { "content-type": file[1] });
  response.end(fs.readFileSync(path.join(here, file[0])));
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) {
    console.log("PASS " + name);
    passed++;
  } else {
    console.log("FAIL " + name + ": " + detail);
    failed++;
  }
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const page = await browser.newPage({ viewport: { width: 640, height: 520 } });
const consoleLines = [];
page.on("console", (message) => consoleLines.push(`[${message.type()}] ${message.text()}`));
page.on("pageerror", (error) => consoleLines.push(`[pageerror] ${error.message}`));

try {
  await page.goto(origin + "/?tool=show_weather&arguments=" + encodeURIComponent('{"city":"Lisbon"}'));
  await page.waitForFunction(() => ["rendered", "failed"].includes(document.body.dataset.state), null, {
    timeout: 30000,
  });
  const state = await page.evaluate(() => document.body.dataset.state);
  const hostLog = await page.locator("#log").innerText();
  check("the host connected, read the view and rendered the tool's result", state === "rendered", hostLog);

  const offered = await page.evaluate(() => document.body.dataset.modelTools);
  const appOnly = await page.evaluate(() => document.body.dataset.appOnlyTools);
  check(
    "the view-only tool is kept from the model's list",
    offered === "show_weather" && appOnly === "refresh_weather",
    `model: ${offered}; app-only: ${appOnly}`,
  );

  const view = page.frameLocator("#view");
  await view.locator("#status").filter({ hasText: "shown" }).waitFor({ timeout: 10000 });
  const city = await view.locator("#city").innerText();
  const temperature = await view.locator("#temperature").innerText();
  const reading = await view.locator("#reading").innerText();
  check("the view shows the tool's result", city === "Lisbon" && /°C$/.test(temperature) && reading === "reading 1",
    `city ${city}, temperature ${temperature}, ${reading}`);
  await page.screenshot({ path: path.join(artifacts, "mcp-apps-view.png") });

  await view.locator("#refresh").click();
  await view.locator("#status").filter({ hasText: /refreshed|error/ }).waitFor({ timeout: 10000 });
  const status = await view.locator("#status").innerText();
  const after = await view.locator("#reading").innerText();
  check("the view's button calls the server's app-only tool and shows its answer",
    status === "refreshed" && after === "reading 2", `status ${status}, ${after}`);
  await page.screenshot({ path: path.join(artifacts, "mcp-apps-view-refreshed.png") });
} catch (error) {
  check("the browser run", false, error.message);
}
if (failed > 0) {
  console.log("host log:\n" + (await page.locator("#log").innerText().catch(() => "(none)")));
  console.log("console:\n" + consoleLines.join("\n"));
}
await browser.close();
server.close();
console.log(`${passed} passed, ${failed} failed; screenshots in ${artifacts}`);
process.exit(failed > 0 ? 1 : 0);
