/**
 * The format of the CSV files wmsbridge writes (result files, reports, pulled exports): its schema sits on the floor so
 * the configuration (config/schema.ts) declares it without importing the outbox that writes it (outbox/csv.ts).
 */
import { z } from 'zod';

export const CsvFormatSchema = z.strictObject({
  /** @default 'utf-8-bom' (Excel detects UTF-8 only with the BOM) */
  encoding: z.enum(['utf-8-bom', 'utf-8', 'windows-1252']).default('utf-8-bom'),
  /** @default ';' (what Excel expects in a pt-BR locale) */
  delimiter: z.enum([';', ',', '\t', '|']).default(';'),
  /** @default ',' */
  decimalSeparator: z.enum([',', '.']).default(','),
  /** format of Date values and of ISO date strings in date columns. @default 'dd/MM/yyyy HH:mm:ss' */
  dateFormat: z.enum(['iso', 'dd/MM/yyyy', 'dd/MM/yyyy HH:mm:ss']).default('dd/MM/yyyy HH:mm:ss'),
  /** @default '\r\n' */
  lineEnding: z.enum(['\r\n', '\n']).default('\r\n'),
  /** prefix cells starting with = + - @ TAB CR with ' (numbers excepted). @default true */
  neutralizeFormulas: z.boolean().default(true),
  /**
   * IANA time zone used to show instants (Date values, ISO strings with Z or an offset).
   * @default the machine's time zone
   */
  timeZone: z.string().optional(),
});
