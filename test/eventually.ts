// Polling for a condition in tests: never a fixed sleep standing in for "long enough".

/** Resolves once `check` resolves true (polled every `everyMs`; a throw counts as false), or rejects after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string | (() => string), everyMs = 100): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === "string" ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
