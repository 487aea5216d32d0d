/** Recorded on worker rows; kept in step with package.json by hand (no file reads at run time). */
export const SONIQ_VERSION = "0.1.0";
