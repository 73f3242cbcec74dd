//! Server responses: OK, ERR, EOF, column definitions, rows, whole result sets.
