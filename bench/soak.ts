import type { Figure } from './support/report.js';
export async function soakFigures(_options: { quick: boolean; minutes: number }): Promise<Figure[]> {
  return [];
}
