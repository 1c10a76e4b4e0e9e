// deploy/nginx.conf run on loopback, as deploy/proxy.test.ts and bench/capacity.ts run it: only the
// upstream addresses, the listen address and nginx's own file paths are rewritten.

/** Debian's nginx (CI installs `nginx-light`). */
export const NGINX = "/usr/sbin/nginx";

/** deploy/nginx.conf with loopback upstreams (a and b each a backend of its own) and nginx's files in `dir`; everything else as shipped. */
export function loopbackNginxConf(
  conf: string,
  options: { dir: string; port: number; gatewayPorts: [number, number]; realtimePorts: [number, number] },
): string {
  const rewritten = conf
    .replace("server gateway-a:4000", `server 127.0.0.1:${options.gatewayPorts[0]}`)
    .replace("server gateway-b:4000", `server 127.0.0.1:${options.gatewayPorts[1]}`)
    .replace("server realtime-a:4100", `server 127.0.0.1:${options.realtimePorts[0]}`)
    .replace("server realtime-b:4100", `server 127.0.0.1:${options.realtimePorts[1]}`)
    .replace("listen 8080;", `listen 127.0.0.1:${options.port};`)
    .replace("worker_processes auto;", "worker_processes 1;")
    .replace("worker_connections 16384;", "worker_connections 4096;")
    .replace("/var/log/nginx/access.log", `${options.dir}/access.log`)
    .replace(
      "http {",
      ["http {", ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((name) => `${name}_temp_path ${options.dir}/${name};`)].join("\n  "),
    );
  if (/server (gateway|realtime)-/.test(rewritten)) throw new Error("deploy/nginx.conf names an upstream server this test does not map");
  return `pid ${options.dir}/nginx.pid;\nerror_log ${options.dir}/error.log warn;\n${rewritten}`;
}
