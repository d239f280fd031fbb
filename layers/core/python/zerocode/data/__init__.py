"""The apps' own data (issue 39): their data model, records, end users and access rules."""
