import { FRAME_LENGTH_CEILING, MIN_FRAME_LIMIT, ZooKeeperError } from '../protocol/index.js';

/** A frame size option in bytes: an integer in [MIN_FRAME_LIMIT, FRAME_LENGTH_CEILING], else INVALID_ARGUMENT naming the option. */
export function checkFrameLimit(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < MIN_FRAME_LIMIT || value > FRAME_LENGTH_CEILING) {
    throw new ZooKeeperError('INVALID_ARGUMENT', `${name} must be an integer number of bytes in [${MIN_FRAME_LIMIT}, ${FRAME_LENGTH_CEILING}], got ${String(value)}`);
  }
  return value;
}
