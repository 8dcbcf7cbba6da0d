// What the API pipeline hands to the site it mounts under /dashboard. src/dashboard/ stands above
// http/ and implements this; the pipeline knows only this shape, never the dashboard itself.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the app knows of a request before the mounted site sees it. */
export interface Arrival {
  readonly requestId: string;
  /** The request target as the app's router read it (absolute form and %-decoding included). */
  readonly path: string;
  /** The query string, without its `?`. */
  readonly search: string;
  /** Reached over HTTPS (or a trusted proxy's): HSTS is sent. */
  readonly secure: boolean;
  /** The server drains: the answer ends its HTTP/1.1 connection. */
  readonly close: boolean;
}

/** A site with its own pipeline and headers under a prefix (the dashboard). */
export interface MountedSite {
  /** Answers any request under its prefix; resolves with the status sent. */
  handle(req: IncomingMessage, res: ServerResponse, arrival: Arrival): Promise<number>;
}
