// The zoo's admin surfaces (/api/v1) answer the admin token's holder only: the private stack's
// (JITZOO_ADMIN_TOKEN, set by the command line that started it) goes with every call.

/** Fetches a zoo admin URL with the admin token, when one is set. */
export function zooFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const token = process.env.JITZOO_ADMIN_TOKEN;
  return fetch(url, { ...init, headers: { ...(init.headers as Record<string, string>), ...(token ? { authorization: `Bearer ${token}` } : {}) } });
}
