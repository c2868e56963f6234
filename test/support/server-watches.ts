/** The paths the server holds a watch on for `session` (four-letter word `wchc`, which lists them by session). */
export async function serverWatches(server: { fourLetterWord(command: string): Promise<string> }, session: bigint): Promise<string[]> {
  const text = await server.fourLetterWord('wchc');
  const blocks = text.split(/^(?=0x)/m);
  const ours = blocks.find((block) => BigInt(block.split('\n')[0]!.trim()) === session);
  return ours ? ours.split('\n').slice(1).map((line) => line.trim()).filter(Boolean) : [];
}

/** The sessions the server holds a watch on `path` for (four-letter word `wchp`, which lists them by path). */
export async function sessionsWatching(server: { fourLetterWord(command: string): Promise<string> }, path: string): Promise<string[]> {
  const text = await server.fourLetterWord('wchp');
  const block = text.split(/^(?=\S)/m).find((b) => b.split('\n')[0]!.trim() === path);
  return block ? block.split('\n').slice(1).map((line) => line.trim()).filter(Boolean) : [];
}
