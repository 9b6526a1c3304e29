// What `ws` resolves to in the page (client_alias.ts): the client package loads `ws` only where
// there is no global WebSocket, and a browser has one. Reaching this module is a bug.
throw new Error('the ws package is not part of the page: the browser WebSocket is used');

export {};
