// Package gradebook serves the gradebook export and download operations (decisions §10):
// an export streams every matching gradebook into a file kept in the partition's database,
// which any credo process sharing the database can serve until the export's Expiry.
//
// Choices where the specification is silent:
//   - An export takes the list parameters. Without Take (or Filter.Take) it exports every match
//     and Page must be absent or 1; with Take it exports that one page (Take at most the
//     group's maximum page size).
//   - Format (json, the default, or csv) chooses the file; the export's own answer is always
//     JSON. Includes and Excludes choose the members (Includes also orders the CSV columns).
//     The file holds exactly the bytes the list operation would answer for the same rows: a
//     compact JSON array ending in a newline, or CSV with a header row, RFC 4180 quoting and
//     CRLF line ends. An empty result is "[]" or the header row alone.
//   - ExportFormat is "json" or "csv"; ExportKey is a UUID (version 7); DownloadUrl is the
//     path-absolute URL of the download operation; Expiry is now + 15 minutes rounded up to
//     the next quarter hour, in UTC.
//   - A caller limited to an organization exports that organization's gradebooks, and may
//     download exports of its organization only; an operator's export spans every
//     organization and only operators may download it. Any other key, an expired one or one
//     whose file is gone is a 404 that says nothing more.
//   - The file is the content of the export's record (engine.Store.InsertWithContent): written
//     in 256 KiB chunks to the partition's database, then recorded, so that a download on any
//     process never sees a partial file and memory stays flat whatever the size. A download
//     reads it back a chunk per statement and answers Range requests. Expired exports are
//     removed when a download finds them, and by Cleanup on every process, which also removes
//     content that no export owns.
package gradebook
