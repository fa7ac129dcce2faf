// A host built on the official TypeScript MCP SDK `Client` (tests/compat/test_matrix.py).
// Usage: node sdk_host.mjs '<plan JSON>'; the plan names the server (stdio command or
// Streamable HTTP URL) and one tool call. Prints one JSON object on stdout: what the SDK
// returned for tools/list (every page), the tool call, resources/list and prompts/list
// (when the server declares them), or {"error": "..."} for the first request that failed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const plan = JSON.parse(process.argv[2]);
const transport = plan.url
  ? new StreamableHTTPClientTransport(new URL(plan.url))
  : new StdioClientTransport({
      command: plan.command[0], args: plan.command.slice(1),
      env: { ...process.env, ...(plan.env ?? {}) }, stderr: "inherit",
    });
const client = new Client({ name: "histor-compat-ts-host", version: "0" });
const out = {};

async function all(method, key) {
  const items = [];
  let cursor;
  do {
    const page = await client[method](cursor ? { cursor } : undefined);
    items.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

try {
  await client.connect(transport);
  const caps = client.getServerCapabilities() ?? {};
  out.tools = await all("listTools", "tools");
  out.call = await client.callTool({ name: plan.call.name, arguments: plan.call.arguments });
  if (caps.resources) out.resources = await all("listResources", "resources");
  if (caps.prompts) out.prompts = await all("listPrompts", "prompts");
} catch (err) {
  out.error = String(err?.message ?? err);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
