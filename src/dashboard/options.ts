// The dashboard's options, set by `serve --signup/--operator-email` and `startServer({ dashboard })`.

export const SIGNUP_MODES = ['open', 'closed'] as const;
export type SignupMode = (typeof SIGNUP_MODES)[number];

export interface DashboardOptions {
  /** 'open': anyone may create a free account; 'closed' (the default): accounts come from the CLI or the embedding API. */
  readonly signup?: SignupMode;
  /** Where `Request upgrade` points (a mailto: link); upgrade requests are logged either way. */
  readonly operatorEmail?: string | null;
}
