/**
 * Places panels on Grafana's 24-column grid left to right, wrapping to a new line, with rows as
 * section headers. Positions are explicit so the JSON is stable and reviewable.
 */
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import { RowBuilder, type DashboardBuilder, type GridPos, type Panel } from '@grafana/grafana-foundation-sdk/dashboard';

export const GRID_COLUMNS = 24;

/** Any SDK panel builder (they all have gridPos, but share no interface that says so). */
export interface PlaceablePanel extends cog.Builder<Panel> {
  gridPos(gridPos: GridPos): unknown;
}

export class Layout {
  private x = 0;
  private y = 0;
  private lineHeight = 0;

  constructor(private readonly dashboard: DashboardBuilder) {}

  /** A section header across the full width. */
  row(title: string): this {
    this.newLine();
    this.dashboard.withRow(new RowBuilder(title).gridPos({ x: 0, y: this.y, w: GRID_COLUMNS, h: 1 }));
    this.y += 1;
    return this;
  }

  /** Next to the previous panel, or on a new line when it does not fit. */
  add(panel: PlaceablePanel, w: number, h: number): this {
    if (w > GRID_COLUMNS) throw new Error(`panel wider than the grid: ${w}`);
    if (this.x + w > GRID_COLUMNS) this.newLine();
    panel.gridPos({ x: this.x, y: this.y, w, h });
    this.dashboard.withPanel(panel);
    this.x += w;
    this.lineHeight = Math.max(this.lineHeight, h);
    return this;
  }

  private newLine(): void {
    if (this.x === 0) return;
    this.y += this.lineHeight;
    this.x = 0;
    this.lineHeight = 0;
  }
}
