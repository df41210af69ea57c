# The layers of ../shared/DESIGN.md as libraries. Each layer is one static library, pacer_<name>,
# over the folders it owns. Its sources see its own headers and the public headers of the layers it
# depends on, nothing else: each layer gets two include roots in the build tree, made of symbolic
# links, a private one (all its headers, for its own sources) and a public one (the headers other
# layers may include, passed on to the layers that link it). An include from a layer above, or of
# another layer's private header, then fails to compile. scripts/check_layers.py checks the same
# rules over the whole tree, with messages that name the rule, and runs in the build and in
# `make test`; it reads the map this file writes (layers.json).

set(PACER_LAYER_ROOTS ${PROJECT_BINARY_DIR}/layers)
set_property(GLOBAL PROPERTY PACER_LAYER_MAP "")

# pacer_layer(<name>
#   BASE <folder the layer's includes are spelled from, e.g. src>
#   DIRS <the layer's folders, relative to BASE>
#   SOURCES <its source files>
#   PUBLIC_HEADERS <its headers that other layers may include, relative to BASE>
#   API_HEADERS <the include/pacer/ headers it implements, relative to include/: only it and the
#                layers above it may include them>
#   DEPENDS <the layers it uses (their public headers, and theirs in turn)>
#   TOP: the top layer, which hides the layers under it from those that link it
#   PUBLIC_LINK <libraries its public headers need> LINK <libraries only its sources need>)
function(pacer_layer name)
  cmake_parse_arguments(L "TOP" "BASE"
                        "DIRS;SOURCES;PUBLIC_HEADERS;API_HEADERS;DEPENDS;PUBLIC_LINK;LINK"
                        ${ARGN})
  set(target pacer_${name})
  set(root ${PACER_LAYER_ROOTS}/${name})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root}/public ${root}/private)
  foreach(dir ${L_DIRS})
    get_filename_component(parent ${root}/private/${dir} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${L_BASE}/${dir} ${root}/private/${dir} SYMBOLIC)
  endforeach()
  foreach(header ${L_API_HEADERS})
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/include/${header})
      message(FATAL_ERROR "layer ${name}: API header include/${header} does not exist")
    endif()
  endforeach()
  foreach(header ${L_PUBLIC_HEADERS})
    if(NOT EXISTS ${L_BASE}/${header})
      message(FATAL_ERROR "layer ${name}: public header ${header} does not exist")
    endif()
    get_filename_component(parent ${root}/public/${header} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${L_BASE}/${header} ${root}/public/${header} SYMBOLIC)
  endforeach()

  add_library(${target} STATIC ${L_SOURCES})
  target_include_directories(${target} PRIVATE ${root}/private)
  target_include_directories(${target} PUBLIC ${root}/public)
  set(visibility PUBLIC)
  if(L_TOP)
    set(visibility PRIVATE)
  endif()
  foreach(dep ${L_DEPENDS})
    target_link_libraries(${target} ${visibility} pacer_${dep})
  endforeach()
  target_link_libraries(${target} PUBLIC ${L_PUBLIC_LINK} PRIVATE ${L_LINK})
  set_property(GLOBAL APPEND PROPERTY PACER_LAYER_TARGETS ${target})
  set_property(GLOBAL APPEND PROPERTY PACER_LAYER_LINKS ${L_PUBLIC_LINK} ${L_LINK})
  set_property(GLOBAL APPEND PROPERTY PACER_LAYER_PRIVATE_ROOTS ${root}/private)

  file(RELATIVE_PATH base ${PROJECT_SOURCE_DIR} ${L_BASE})
  set(entry "\"${name}\": {\"base\": \"${base}\", \"dirs\": [")
  set(separator "")
  foreach(dir ${L_DIRS})
    string(APPEND entry "${separator}\"${dir}\"")
    set(separator ", ")
  endforeach()
  string(APPEND entry "], \"public\": [")
  set(separator "")
  foreach(header ${L_PUBLIC_HEADERS})
    string(APPEND entry "${separator}\"${header}\"")
    set(separator ", ")
  endforeach()
  string(APPEND entry "], \"api\": [")
  set(separator "")
  foreach(header ${L_API_HEADERS})
    string(APPEND entry "${separator}\"${header}\"")
    set(separator ", ")
  endforeach()
  string(APPEND entry "], \"depends\": [")
  set(separator "")
  foreach(dep ${L_DEPENDS})
    string(APPEND entry "${separator}\"${dep}\"")
    set(separator ", ")
  endforeach()
  string(APPEND entry "]}")
  set_property(GLOBAL APPEND PROPERTY PACER_LAYER_MAP "${entry}")
endfunction()

# `name`: an interface library for the tests, which see every layer's headers, private ones too
# (they test the layers' insides), and link every layer.
function(pacer_add_internal_view name)
  get_property(targets GLOBAL PROPERTY PACER_LAYER_TARGETS)
  get_property(roots GLOBAL PROPERTY PACER_LAYER_PRIVATE_ROOTS)
  add_library(${name} INTERFACE)
  target_include_directories(${name} INTERFACE ${roots})
  target_link_libraries(${name} INTERFACE ${targets})
endfunction()

# Writes the layers declared so far to `path` as JSON, for scripts/check_layers.py.
function(pacer_write_layer_map path)
  get_property(entries GLOBAL PROPERTY PACER_LAYER_MAP)
  string(REPLACE ";" ",\n  " body "${entries}")
  file(WRITE ${path} "{\n  ${body}\n}\n")
endfunction()

# `name`: the library that is installed and that embedders link, pacer::pacer: the objects of
# every layer (and of `extra_objects_of`, such as the generated protobuf code) in one archive, or
# one shared object with BUILD_SHARED_LIBS. It compiles nothing again. The layers' external
# libraries become its own, private ones (an archive passes them on as link-only).
function(pacer_add_installed_library name)
  cmake_parse_arguments(L "" "" "EXTRA_OBJECTS_OF;LINK" ${ARGN})
  get_property(targets GLOBAL PROPERTY PACER_LAYER_TARGETS)
  get_property(links GLOBAL PROPERTY PACER_LAYER_LINKS)
  set(objects "")
  foreach(target ${targets} ${L_EXTRA_OBJECTS_OF})
    list(APPEND objects $<TARGET_OBJECTS:${target}>)
  endforeach()
  list(REMOVE_ITEM links ${targets} ${L_EXTRA_OBJECTS_OF})
  list(REMOVE_DUPLICATES links)
  add_library(${name} ${objects})
  target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                            $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${name} PUBLIC cxx_std_17)
  target_link_libraries(${name} PRIVATE ${links} ${L_LINK})
  set_target_properties(${name} PROPERTIES OUTPUT_NAME pacer EXPORT_NAME pacer LINKER_LANGUAGE CXX
                                           VERSION ${PROJECT_VERSION}
                                           SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
endfunction()
