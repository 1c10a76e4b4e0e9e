// One bounded wait for a goodbye a server may never answer (a PostgreSQL connection's end, an
// advisory lock's release, a Redis QUIT): shutdown and standing down never wait on a dead peer.

/** Waits for `work` to settle (its outcome ignored), at most `ms`. */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([work.catch(() => undefined), late]);
  clearTimeout(timer);
}
