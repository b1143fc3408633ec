/**
 * Zeros a slice is taken from: an array of doubles from the start. `new Array(n).fill(0)` holds
 * small integers until the first hash is stored, and that store copies the whole array into one
 * of doubles: every packed array of a trace would be allocated twice.
 */
const TEMPLATE_LENGTH = 1024;
const ZEROS: number[] = new Array<number>(TEMPLATE_LENGTH).fill(0.5).fill(0);

/** `n` zeros in an array that holds doubles unboxed, allocated once at its exact size. */
export function doubles(n: number): number[] {
  return n <= TEMPLATE_LENGTH ? ZEROS.slice(0, n) : new Array<number>(n).fill(0);
}
