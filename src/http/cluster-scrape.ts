/** The message a cluster worker sends its primary for the whole cluster's metrics, and the answer. */
export const CLUSTER_SCRAPE_REQUEST = "chat-serve:metrics-request";
export const CLUSTER_SCRAPE_REPLY = "chat-serve:metrics-reply";
/** Set by `start --workers` on each worker it forks. */
export const CLUSTER_WORKER_ENV = "CHAT_SERVE_CLUSTER_WORKER";
