/**
 * Choosing and writing an output format. Commands describe their records
 * once (columns + a JSON shape) and hand them to a `RecordStream`; the format
 * decides the bytes. Table on a terminal, plain otherwise, unless `-o`/`--json`
 * says so.
 */
import type { Charset } from './charset.js';
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
  /**
   * `ascii` when the locale is not UTF-8 (output/charset.ts): table and wide output then show
   * agentq's glyphs in ASCII (`write` does it). UTF-8 when absent.
   */
  charset?: Charset;
  /** A line for the person reading, not the output (stderr): what a listing with no rows says. */
  note?(line: string): void;
}

export interface RecordSpec<T> {
  columns: readonly Column<T>[];
  /** The JSON shape of one record (a zod-schema shape); the record itself by default. */
  toJson?: (row: T) => unknown;
  /**
   * What a table or plain listing with no rows says instead, one line on stderr ("No jobs match
   * this selection."): a header alone reads as output cut short, and plain output has no header
   * at all, so an empty one says nothing. As kubectl's "No resources found in <ns> namespace."
   * (exit 0). json and ndjson stay machine-shaped ([] / nothing) and say nothing more.
   */
  empty: string;
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
  private rows = 0;
  private headerShown = false;
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
      case 'wide':
        // (an empty page shows nothing: the header comes with the first rows, sized by them, or
        // never, and `end` says the listing is empty)
        if (rows.length > 0) await this.renderTable(rows);
        break;
    }
    this.rows += rows.length;
    // A page at a time in memory, also for a reader slower than the store: wait until it took this one.
    await this.out.drain?.();
  }

  /**
   * Shows a table's header now, before any row: for a stream that waits for rows (`tail
   * --follow`), where the header says the command is running. Nothing in the other formats.
   */
  async header(): Promise<void> {
    if (this.headerShown || (this.out.format !== 'table' && this.out.format !== 'wide')) return;
    await this.renderTable([]);
    await this.out.drain?.();
  }

  private async renderTable(rows: readonly T[]): Promise<void> {
    const { renderTable } = await import('./table.js');
    const t = renderTable(this.spec.columns, rows, {
      palette: this.out.palette,
      width: this.out.width,
      wide: this.out.format === 'wide',
      colWidths: this.colWidths,
      dropped: this.dropped,
      ages: this.ages,
      header: !this.headerShown,
    });
    this.headerShown = true;
    this.colWidths = t.colWidths;
    this.dropped = t.dropped;
    this.ages = t.ages;
    this.out.write(t.text);
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
    } else if (this.rows === 0 && !this.headerShown && !isMachineFormat(this.out.format)) {
      this.out.note?.(this.spec.empty);
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
