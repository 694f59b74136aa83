# Writes a stand-in for the next event schema minor: the current schema with one more
# event kind appended to the union, in a namespace of its own (so that its generated
# types never meet the current ones in one program). Run with -DIN=... -DOUT=...
file(READ ${IN} schema)
string(REPLACE "namespace arbiter.fb;" "namespace arbiter.fb_next;" schema "${schema}")
string(REPLACE "union EventBody {" "// The next minor's new event kind.\ntable FutureKind {\n  note: string;\n  weight: double;\n}\n\nunion EventBody {" schema "${schema}")
string(REGEX REPLACE "(union EventBody {[^}]*)}" "\\1  FutureKind,\n}" schema "${schema}")
if(NOT schema MATCHES "FutureKind,")
  message(FATAL_ERROR "could not append FutureKind to the union of ${IN}")
endif()
file(WRITE ${OUT} "${schema}")
