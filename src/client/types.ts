// The client's parameter and response types, computed from the resource definitions the server runs
// on (src/resources/): the same fields, nullability (CONTRACT 1), filters and sorts, never written
// again by hand. Type-only: nothing here exists at run time.
import type { ErrorCode } from '../errors.ts';
import type { DEFINITIONS } from '../resources/index.ts';
import type { CollectionName } from '../resources/types.ts';

type Defs = typeof DEFINITIONS;
type Elem<T> = T extends readonly (infer E)[] ? E : never;
/** Shows an object type as its fields rather than as the type expression that made it. */
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The value of a schema that is present (src/resources/schema.ts). */
type Value<S> = S extends { readonly type: 'string'; readonly enum: readonly (infer E)[] }
  ? E
  : S extends { readonly type: 'string' }
    ? string
    : S extends { readonly type: 'integer' | 'number' }
      ? number
      : S extends { readonly type: 'boolean' }
        ? boolean
        : S extends { readonly type: 'array'; readonly items: infer I }
          ? Value<I>[]
          : S extends { readonly type: 'map'; readonly values: infer V }
            ? Record<string, Value<V>>
            : S extends { readonly type: 'object'; readonly properties: infer P; readonly required: infer R }
              ? Simplify<{ -readonly [K in keyof P]: Member<P[K], K extends Elem<R> ? true : false> }>
              : never;

/** A field as the serializer writes it: arrays are [] when missing, anything else not required is nullable. */
type Member<S, Required> = Required extends true ? Value<S> : S extends { readonly type: 'array' } ? Value<S> : Value<S> | null;

/** Derived fields replace source fields of the same name (src/resources/types.ts outputSchema). */
type FieldSchema<D, N> = D extends { readonly derived: { readonly properties: infer DP }; readonly source: { readonly properties: infer SP } }
  ? N extends keyof DP ? DP[N] : N extends keyof SP ? SP[N] : never
  : never;
type IsRequired<D, N> = D extends { readonly derived: { readonly properties: infer DP; readonly required: infer DR }; readonly source: { readonly required: infer SR } }
  ? N extends keyof DP ? (N extends Elem<DR> ? true : false) : N extends Elem<SR> ? true : false
  : false;

/** An embedded object: picked fields of another collection's record (`from`), or of the record's own object. */
type Embedded<D, F> = F extends { readonly name: infer N; readonly pick: readonly (infer K)[] }
  ? F extends { readonly from: infer C extends CollectionName }
    ? Simplify<{ [P in K & string]: Member<FieldSchema<Defs[C], P>, IsRequired<Defs[C], P>> }>
    : FieldSchema<D, N> extends { readonly properties: infer OP; readonly required: infer OR }
      ? Simplify<{ [P in K & string & keyof OP]: Member<OP[P], P extends Elem<OR> ? true : false> }>
      : never
  : never;

type FieldValue<D, F> = F extends string
  ? Member<FieldSchema<D, F>, IsRequired<D, F>>
  : F extends { readonly name: infer N }
    ? IsRequired<D, N> extends true ? Embedded<D, F> : Embedded<D, F> | null
    : never;

type Shape<D, Fields> = Simplify<{
  [F in Elem<Fields> as F extends string ? F : F extends { readonly name: infer N extends string } ? N : never]: FieldValue<D, F>;
}>;

/** One record of collection C in the list shape (SPEC 2, CONTRACT 1). */
export type ListItem<C extends CollectionName> = Shape<Defs[C], Defs[C]['listFields']>;
/** One record of collection C in the detail shape. */
export type Detail<C extends CollectionName> = Shape<Defs[C], Defs[C]['detailFields']>;

export interface Pagination {
  readonly page: number;
  readonly limit: number;
  readonly total: number;
  readonly pages: number;
}

/** A list response. */
export interface Page<C extends CollectionName> {
  readonly success: true;
  readonly version: 'v1';
  readonly resource: C;
  readonly pagination: Pagination;
  readonly data: ListItem<C>[];
}

/** A single-record response. */
export interface One<C extends CollectionName> {
  readonly success: true;
  readonly version: 'v1';
  readonly resource: C;
  readonly data: Detail<C>;
}

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** The query parameters a filter adds: text and slug filters take strings, enums their values, ranges decimals. */
type FilterParams<F> = F extends { readonly kind: 'text' | 'slug'; readonly param: infer P extends string }
  ? { readonly [K in P]?: string }
  : F extends { readonly kind: 'enum'; readonly param: infer P extends string; readonly values: readonly (infer V)[] }
    ? { readonly [K in P]?: V }
    : F extends { readonly kind: 'boolean'; readonly param: infer P extends string }
      ? { readonly [K in P]?: boolean }
      : F extends { readonly kind: 'range'; readonly minParam: infer A extends string; readonly maxParam: infer B extends string }
        ? { readonly [K in A | B]?: number | string }
        : never;

/** The parameters of a list endpoint (CONTRACT 3); a range bound may be a number or its decimal text. */
export type ListParams<C extends CollectionName> = Simplify<
  {
    readonly page?: number;
    readonly limit?: number;
    readonly sort?: Elem<Defs[C]['sorts']> extends { readonly name: infer S } ? S : never;
    readonly search?: string;
  } & UnionToIntersection<FilterParams<Elem<Defs[C]['filters']>>>
>;

/** The body of an error response (SPEC 7). */
export interface ErrorBody {
  readonly success: false;
  readonly error: ErrorCode;
  readonly message: string;
  readonly quota?: Quota;
}

export interface Quota {
  readonly used: number;
  readonly total: number;
  readonly resetsOn: string;
}
