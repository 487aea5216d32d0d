export {
  actorFor,
  createMcpServer,
  type McpOptions,
  type RunningMcpServer,
  refuseWrites,
  type StartMcpServerOptions,
  startMcpServer,
} from "./server.js";
export { MCP_VERSION } from "./version.js";
