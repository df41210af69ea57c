# Runs Doxygen over the public headers (docs/Doxyfile, which fails on an undocumented member) and
# checks that Config's options, which a filter reads from their table, made it into the reference:
# Doxygen would drop them silently where the filter cannot run.
# Usage, from the source root: cmake -DDOXYGEN=<doxygen> -DOUT=<folder> -P api_reference.cmake
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(ENV{PACER_DOCS_OUT} ${OUT})
execute_process(COMMAND ${DOXYGEN} docs/Doxyfile RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "doxygen docs/Doxyfile failed (${status}): see the members named above")
endif()
file(READ ${OUT}/html/structpacer_1_1Config.html config_page)
foreach(name SERVERS SYNC OPTIMIZER)
  if(NOT config_page MATCHES "PACER_${name}")
    message(FATAL_ERROR "the reference of pacer::Config lacks the option PACER_${name}")
  endif()
endforeach()
