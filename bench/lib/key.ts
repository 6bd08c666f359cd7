/** The API key the `production` bench target accepts. */
export const BENCH_KEY = "sk-bench-0123456789abcdef";
