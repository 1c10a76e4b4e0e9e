// Container healthcheck of docker-compose.yml: exits 0 when GET <url> answers 2xx within the
// timeout, 1 otherwise. Plain Node (no tsx, no dependencies) so a check costs a few milliseconds.
//   node deploy/healthcheck.mjs http://127.0.0.1:4000/readyz [timeoutMs]   (every service: docs/reference/health.md)
const [url, timeoutMs = "3000"] = process.argv.slice(2);
if (!url) {
  process.stderr.write("usage: node deploy/healthcheck.mjs <url> [timeoutMs]\n");
  process.exit(2);
}
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(Number(timeoutMs)) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
