# The layering of docs/architecture.md, checked on the sources' own #include lines:
#   cmake -DROOT=<checkout> -P check_layering.cmake
# Fails (listing every offence) when a file includes a folder its layer may not see:
#   kernels/common   kernels/common
#   kernels/cpu      kernels/common, kernels/cpu
#   kernels/cuda     kernels/common, kernels/cuda
#   engine/          kernels/common, kernels/cpu, engine/, and the public vocabulary headers
#                    eagerlm/{common,error,export,version}.h*; engine/cuda/ (the CUDA module)
#                    also kernels/cuda
#   models/          kernels/common, engine/, models/, the vocabulary headers
#   api/             kernels/common, engine/, models/, api/, include/eagerlm/
#   server/          the public API (eagerlm/) and server/ only: a front end, as the Python package
#   cli/             everything below it and server/, nothing of tools/ or test/
#   include/eagerlm  its own headers only
#   python/          python/ and include/eagerlm/: the Python package binds the public API only
# and when models/ names a device or the CUDA namespace (Device::kCuda, cuda::): a model runs on
# whatever backend its ExecContext has. tools/, test/ and fuzz/ may include anything.
if(NOT ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<checkout> -P check_layering.cmake")
endif()

set(vocabulary "eagerlm/common.hpp|eagerlm/error.hpp|eagerlm/export.h|eagerlm/version.h")
set(allowed_kernels/common "^kernels/common/")
set(allowed_kernels/cpu "^kernels/(common|cpu)/")
set(allowed_kernels/cuda "^kernels/(common|cuda)/")
set(allowed_engine/cuda "^(kernels/(common|cpu|cuda)/|engine/|(${vocabulary})$)")
set(allowed_engine "^(kernels/(common|cpu)/|engine/|(${vocabulary})$)")
set(allowed_models "^(kernels/common/|engine/|models/|(${vocabulary})$)")
set(allowed_api "^(kernels/common/|engine/|models/|api/|eagerlm/)")
set(allowed_server "^(server/|eagerlm/)")
set(allowed_cli "^(kernels/(common|cpu)/|engine/|models/|api/|server/|cli/|eagerlm/)")
set(allowed_include "^[a-z_]+\\.(h|hpp)$|^eagerlm/")
set(allowed_python "^(python/|eagerlm/)")
# Most specific first.
set(layers kernels/common kernels/cpu kernels/cuda engine/cuda engine models api server cli include python)

set(offences "")
foreach(layer IN LISTS layers)
  file(GLOB_RECURSE files LIST_DIRECTORIES false "${ROOT}/${layer}/*.h" "${ROOT}/${layer}/*.hpp"
       "${ROOT}/${layer}/*.cpp" "${ROOT}/${layer}/*.cu" "${ROOT}/${layer}/*.cuh" "${ROOT}/${layer}/*.inc"
       "${ROOT}/${layer}/*.c")
  foreach(file IN LISTS files)
    file(RELATIVE_PATH rel "${ROOT}" "${file}")
    # A file belongs to the most specific layer listed before this one that contains it.
    set(owner "")
    foreach(candidate IN LISTS layers)
      if(rel MATCHES "^${candidate}/")
        set(owner ${candidate})
        break()
      endif()
    endforeach()
    if(NOT owner STREQUAL layer)
      continue()
    endif()
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" target "${line}")
      if(NOT target MATCHES "${allowed_${layer}}")
        list(APPEND offences "${rel}: includes \"${target}\" (${layer}/ may not)")
      endif()
    endforeach()
    if(layer STREQUAL "models")
      file(STRINGS "${file}" device_lines REGEX "Device::kCuda|cuda::")
      foreach(line IN LISTS device_lines)
        string(STRIP "${line}" line)
        string(REPLACE ";" "," line "${line}")  # a ';' would split the list entry
        list(APPEND offences "${rel}: names a device in the model: ${line}")
      endforeach()
    endif()
  endforeach()
endforeach()

if(offences)
  list(LENGTH offences n)
  string(REPLACE ";" "\n  " listed "${offences}")
  message(FATAL_ERROR "layering: ${n} offence(s) against docs/architecture.md:\n  ${listed}")
endif()
message(STATUS "layering: every include points down")
