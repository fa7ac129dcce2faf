// Preloaded with `node --require` by the histor-sign tests: the everything server calls
// app.listen(PORT) (all interfaces); this makes every listen() without a host bind
// 127.0.0.1 instead, so the test peer is never reachable from the network.
"use strict";
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  } else if (args[0] && typeof args[0] === "object" && args[0].host === undefined && args[0].path === undefined) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
