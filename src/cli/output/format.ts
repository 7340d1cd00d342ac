/**
 * Choosing and writing an output format. Commands describe their records
 * once (columns + a JSON shape) and hand them to a `RecordStream`; the format
 * decides the bytes. Table on a terminal, plain otherwise, unless `-o`/`--json`
 * says so.
 */
import { ValidationError } from '../../core/errors.js';
import type { Palette } from './colour.js';
import type { Column } from './columns.js';
import { jsonConflict } from '../output-formats.js';
import { JsonArrayWriter, renderJson } from './json.js';
import { ndjsonLine } from './ndjson.js';
import { renderPlainRow } from './plain.js';

export const OUTPUT_FORMATS = ['table', 'wide', 'plain', 'json', 'ndjson'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * `--json` is `-o json`; both with another `-o` is refused rather than one silently winning (it
 * did, differently per command). Without either: table on a terminal, plain otherwise.
 */
export function resolveFormat(requested: string | undefined, json: boolean | undefined, stdoutIsTTY: boolean): OutputFormat {
  if (json && requested !== undefined && requested !== 'json') throw jsonConflict(requested);
  if (json) return 'json';
  if (requested === undefined) return stdoutIsTTY ? 'table' : 'plain';
  if ((OUTPUT_FORMATS as readonly string[]).includes(requested)) return requested as OutputFormat;
  throw new ValidationError(`output format ${JSON.stringify(requested)} is not one of ${OUTPUT_FORMATS.join(', ')}`);
}

/** Where records go: the command's stdout and what the format needs to know about it. */
export interface OutputTarget {
  format: OutputFormat;
  write(text: string): void;
  /** Resolves once the output can take more (backpressure: see RecordStream.page). */
  drain?(): Promise<void>;
  /** Terminal width, when stdout is a terminal. */
  width: number | undefined;
  palette: Palette;
}

export interface RecordSpec<T> {
  columns: readonly Column<T>[];
  /** The JSON shape of one record (a zod-schema shape); the record itself by default. */
  toJson?: (row: T) => unknown;
}

/**
 * Writes records page by page in bounded memory: tables keep the first
 * page's column widths so later pages line up; JSON becomes one streamed
 * array; NDJSON and plain are line-oriented anyway.
 */
export class RecordStream<T> {
  private colWidths: number[] | undefined;
  private dropped: string[] | undefined;
  private ages: boolean | undefined;
  private jsonArray: JsonArrayWriter | undefined;
  private pages = 0;
  constructor(
    private readonly out: OutputTarget,
    private readonly spec: RecordSpec<T>,
  ) {}

  async page(rows: readonly T[]): Promise<void> {
    const toJson = this.spec.toJson ?? ((r: T) => r);
    switch (this.out.format) {
      case 'json':
        if (!this.jsonArray) {
          this.jsonArray = new JsonArrayWriter((s) => this.out.write(s));
          this.jsonArray.open();
        }
        this.jsonArray.items(rows.map(toJson));
        break;
      case 'ndjson':
        for (const r of rows) this.out.write(ndjsonLine(toJson(r)));
        break;
      case 'plain':
        for (const r of rows) this.out.write(renderPlainRow(this.spec.columns, r));
        break;
      case 'table':
      case 'wide': {
        const { renderTable } = await import('./table.js');
        if (rows.length === 0 && this.pages > 0) break;
        const t = renderTable(this.spec.columns, rows, {
          palette: this.out.palette,
          width: this.out.width,
          wide: this.out.format === 'wide',
          colWidths: this.colWidths,
          dropped: this.dropped,
          ages: this.ages,
          header: this.pages === 0,
        });
        this.colWidths = t.colWidths;
        this.dropped = t.dropped;
        this.ages = t.ages;
        this.out.write(t.text);
        break;
      }
    }
    this.pages++;
    // A page at a time in memory, also for a reader slower than the store: wait until it took this one.
    await this.out.drain?.();
  }

  /**
   * A record that is not a row (a `tail` gap record), written in line with the rows in json and
   * ndjson, where a program reads the stream and must see it; nothing in table and plain, whose
   * columns it does not fit (the command says it on stderr for the person reading).
   */
  async extra(value: unknown): Promise<void> {
    if (!isMachineFormat(this.out.format)) return;
    if (this.out.format === 'ndjson') this.out.write(ndjsonLine(value));
    else {
      if (!this.jsonArray) {
        this.jsonArray = new JsonArrayWriter((s) => this.out.write(s));
        this.jsonArray.open();
      }
      this.jsonArray.items([value]);
    }
    await this.out.drain?.();
  }

  end(): void {
    if (this.out.format === 'json') {
      if (!this.jsonArray) {
        this.jsonArray = new JsonArrayWriter((s) => this.out.write(s));
        this.jsonArray.open();
      }
      this.jsonArray.close();
    }
  }
}

/** Prints one list of records. */
export async function printRecords<T>(out: OutputTarget, spec: RecordSpec<T>, rows: readonly T[]): Promise<void> {
  const stream = new RecordStream(out, spec);
  await stream.page(rows);
  stream.end();
}

/** Prints one object as JSON (for json/ndjson) — for commands whose text form is custom (inspect). */
export function printObject(out: OutputTarget, value: unknown): void {
  out.write(out.format === 'ndjson' ? ndjsonLine(value) : renderJson(value));
}

export function isMachineFormat(format: OutputFormat): boolean {
  return format === 'json' || format === 'ndjson';
}
