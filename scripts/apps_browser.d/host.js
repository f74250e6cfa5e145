// A web host of MCP Apps built on the extension's own host library
// (@modelcontextprotocol/ext-apps/app-bridge) and the official MCP client:
// it connects to the server at /mcp, lists the tools, calls the one with a
// view, reads the view's ui:// resource and renders it in a sandboxed iframe,
// where the AppBridge hands it the tool's input and result and proxies the
// view's own tools/call back to the server. Bundled by esbuild
// (scripts/apps_browser); the page reports each step in #log for the driver.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const log = (line) => {
  const item = document.createElement("li");
  item.textContent = line;
  document.getElementById("log").appendChild(item);
};
const fail = (error) => {
  document.body.dataset.state = "failed";
  log("FAILED " + (error && error.stack ? error.stack : error));
};

async function main() {
  const params = new URLSearchParams(location.search);
  const toolName = params.get("tool") || "show_weather";
  const args = JSON.parse(params.get("arguments") || '{"city": "Lisbon"}');
  const hostInfo = { name: "toolbox-apps-test-host", version: "1.0.0" };

  const client = new Client(hostInfo, {
    capabilities: {
      extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } },
    },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.origin)));
  log("connected to " + JSON.stringify(client.getServerVersion()));

  const { tools } = await client.listTools();
  // What a host offers the model: the tools whose visibility has "model".
  const forModel = tools.filter((t) => !isToolVisibilityAppOnly(t)).map((t) => t.name);
  const appOnly = tools.filter((t) => isToolVisibilityAppOnly(t)).map((t) => t.name);
  document.body.dataset.modelTools = forModel.join(",");
  document.body.dataset.appOnlyTools = appOnly.join(",");
  log("model tools: " + forModel.join(", ") + "; app-only: " + appOnly.join(", "));

  const tool = tools.find((t) => t.name === toolName);
  if (!tool) throw new Error("no tool " + toolName);
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error("the tool " + toolName + " names no view");
  const { contents } = await client.readResource({ uri });
  const view = contents[0];
  if (view.mimeType !== RESOURCE_MIME_TYPE) {
    throw new Error("the view's MIME type is " + view.mimeType + ", not " + RESOURCE_MIME_TYPE);
  }
  log("read " + uri + " (" + view.mimeType + ", " + view.text.length + " characters)");

  const iframe = document.createElement("iframe");
  iframe.id = "view";
  // An opaque origin: the view reaches nothing of the host's page.
  iframe.setAttribute("sandbox", "allow-scripts");
  document.getElementById("frame").appendChild(iframe);

  // The bridge listens before the view loads: the view's first message is
  // its ui/initialize.
  const bridge = new AppBridge(client, hostInfo, { serverTools: {}, logging: {} }, {
    hostContext: { theme: "light", displayMode: "inline" },
  });
  const initialized = new Promise((resolve) => (bridge.oninitialized = resolve));
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = view.text;
  await initialized;
  log("view initialized: " + JSON.stringify(bridge.getAppVersion()));

  await bridge.sendToolInput({ arguments: args });
  const result = await client.callTool({ name: toolName, arguments: args });
  log("called " + toolName + ": " + JSON.stringify(result.structuredContent));
  await bridge.sendToolResult(result);
  document.body.dataset.state = "rendered";
}

main().catch(fail);
