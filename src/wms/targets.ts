/**
 * The send operations a mapping can target, with what the pipeline needs to know about each:
 * its dependency tier, which schema validates it, how it is sent, and whether a read-back can tell
 * if an earlier attempt took effect (which decides what happens to an in-doubt send).
 */
import type { z } from 'zod';
import * as S from './schemas.js';

export const TARGETS = [
  'UnitMeasurement',
  'Category',
  'Family',
  'Product',
  'ConversionFactor',
  'ConversionFactorDelete',
  'ShippingCompany',
  'Provider',
  'Owners',
  'PurchaseOrder',
  'PickingList',
  'StockLock',
  'StockUnlock',
  'StockSync',
  'PickingListAttachment',
] as const;
export type Target = (typeof TARGETS)[number];

/** Resources a `$ref` can point at: everything the WMS stores that has an id. */
export const REF_RESOURCES = [
  'UnitMeasurement',
  'Category',
  'Family',
  'Product',
  'ConversionFactor',
  'ShippingCompany',
  'Provider',
  'Owners',
  'PurchaseOrder',
  'PickingList',
  'Company',
  'Branch',
  'Warehouse',
  'Dock',
  'LogisticsProfile',
  'MaterialStatus',
] as const;
export type RefResource = (typeof REF_RESOURCES)[number];

export interface TargetInfo {
  /**
   * Dependency tier: every record of tier n is settled before any record of tier n+1 is sent.
   * 0 units, categories, carriers, providers, owners; 1 families; 2 products; 3 conversion factors,
   * purchase orders, picking lists, stock sync (sessions last in the tier); 4 stock lock/unlock (after a
   * sync dropped with them has replaced the stock they act on) and attachments (after their picking list).
   */
  readonly tier: number;
  /** Resource under which the returned id is stored in the cross-reference (null: nothing stored). */
  readonly xref: RefResource | null;
  /** Schema the final payload (all refs resolved) must pass before it is sent. */
  readonly schema: z.ZodType;
  /**
   * How an in-doubt send can be settled by reading the WMS: 'codeERP' (Provider, ShippingCompany),
   * 'code' (Owners), 'id' (ConversionFactor update/delete), or null when no read-back exists.
   */
  readonly readBack: 'codeERP' | 'code' | 'id' | null;
  /** Default policy for an in-doubt record without read-back: resend (master data) or hold (documents). */
  readonly inDoubtPolicy: 'resend' | 'hold';
  /** Human label for reports. */
  readonly label: string;
}

export const TARGET_INFO: Readonly<Record<Target, TargetInfo>> = {
  UnitMeasurement: { tier: 0, xref: 'UnitMeasurement', schema: S.UnitMeasurementCreate, readBack: null, inDoubtPolicy: 'resend', label: 'unit of measure' },
  Category: { tier: 0, xref: 'Category', schema: S.CategoryCreate, readBack: null, inDoubtPolicy: 'resend', label: 'category' },
  ShippingCompany: { tier: 0, xref: 'ShippingCompany', schema: S.ShippingCompanyCreate, readBack: 'codeERP', inDoubtPolicy: 'resend', label: 'carrier' },
  Provider: { tier: 0, xref: 'Provider', schema: S.ProviderCreate, readBack: 'codeERP', inDoubtPolicy: 'resend', label: 'provider' },
  Owners: { tier: 0, xref: 'Owners', schema: S.OwnerCreate, readBack: 'code', inDoubtPolicy: 'resend', label: 'owner' },
  Family: { tier: 1, xref: 'Family', schema: S.FamilyCreate, readBack: null, inDoubtPolicy: 'resend', label: 'family' },
  Product: { tier: 2, xref: 'Product', schema: S.ProductCreate, readBack: null, inDoubtPolicy: 'resend', label: 'product' },
  ConversionFactor: { tier: 3, xref: 'ConversionFactor', schema: S.ConversionFactorCreate, readBack: 'id', inDoubtPolicy: 'resend', label: 'conversion factor' },
  ConversionFactorDelete: { tier: 3, xref: null, schema: S.ConversionFactorUpdate.pick({ id: true }), readBack: 'id', inDoubtPolicy: 'resend', label: 'conversion factor deletion' },
  PurchaseOrder: { tier: 3, xref: 'PurchaseOrder', schema: S.PurchaseOrderCreate, readBack: null, inDoubtPolicy: 'hold', label: 'purchase order' },
  PickingList: { tier: 3, xref: 'PickingList', schema: S.PickingListCreate, readBack: null, inDoubtPolicy: 'hold', label: 'picking list' },
  StockLock: { tier: 4, xref: null, schema: S.StockLockRequest, readBack: null, inDoubtPolicy: 'resend', label: 'stock lock' },
  StockUnlock: { tier: 4, xref: null, schema: S.StockLockRequest, readBack: null, inDoubtPolicy: 'resend', label: 'stock unlock' },
  StockSync: { tier: 3, xref: null, schema: S.StockSyncProduct.extend({ ownerId: S.Guid }), readBack: null, inDoubtPolicy: 'resend', label: 'stock sync entry' },
  PickingListAttachment: { tier: 4, xref: null, schema: S.AttachmentRequest, readBack: null, inDoubtPolicy: 'hold', label: 'picking list attachment' },
};

export const MAX_TIER = Math.max(...Object.values(TARGET_INFO).map((t) => t.tier));
