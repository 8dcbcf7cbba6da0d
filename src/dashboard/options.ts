// The dashboard's options, set by `serve --signup/--operator-email` and `startServer({ dashboard })`.
import type { SignupMode } from '../config.ts';

export interface DashboardOptions {
  /** 'open': anyone may create a free account; 'closed' (the default): accounts come from the CLI or the embedding API. */
  readonly signup?: SignupMode;
  /** Where `Request upgrade` points (a mailto: link); upgrade requests are logged either way. */
  readonly operatorEmail?: string | null;
}
