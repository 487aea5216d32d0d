/** The server's version in the MCP handshake; kept in step with package.json by hand (no file reads at run time). */
export const MCP_VERSION = "0.1.0";
