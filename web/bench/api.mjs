// The daemon's HTTP API for the benchmark scripts: `api(method, path, body)` resolves the JSON
// answer, and throws with the status and body on an HTTP error.
export function daemonApi(url) {
  return async (method, path, body) => {
    const res = await fetch(url + path, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
}
