// Connections a server was handed, for a shutdown to end those nothing else reaches.
import type http from "node:http";
import type net from "node:net";

/**
 * Every connection `server` is handed (its own listening socket's and listenOn's extra ones'),
 * upgraded ones included: server.closeAllConnections() does not reach those, and ws holds a WebSocket
 * whose client never answers the closing handshake for 30 s, past a stopping process's deadline.
 */
export function trackConnections(server: http.Server): { destroyAll(): void } {
  const open = new Set<net.Socket>();
  server.on("connection", (socket: net.Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  });
  return {
    destroyAll: () => {
      for (const socket of open) socket.destroy();
    },
  };
}
